"""Fidelity patches of moto's CloudFormation change sets: each one belongs to one stack.

``cdk deploy`` names the change set of every stack ``cdk-deploy-change-set``, deletes it by name and
stack before creating the next one, and deletes a change set with no changes by ARN. moto 5.2.5
finds a change set by ARN or else by name alone, across every stack, and its DeleteChangeSet of a
name that matches nothing fails with ``UnboundLocalError`` (HTTP 500, an HTML page the CDK CLI
cannot parse): the third deploy into one emulator failed after ~50 s of retries.

Each function replaces one moto 5.2.5 ``CloudFormationResponse`` action (or ``CloudFormationBackend``
method) and names the AWS page of the behaviour:

- :func:`_describe_change_set`: found by ARN, or by name within ``StackName``; a miss is
  ``ChangeSetNotFound`` (HTTP 404);
- :func:`_delete_change_set`: the same lookup; a change set that does not exist on an existing stack
  is no error; an unknown stack is ``ValidationError``;
- :func:`_execute_change_set`: the same lookup; only an ``AVAILABLE`` change set runs
  (``InvalidChangeSetStatus``, e.g. a ``FAILED`` one), and running it deletes the stack's other
  change sets;
- :func:`_list_change_sets`: the change sets of ``StackName`` only;
- :func:`_create_change_set_request`: ``UsePreviousValue`` means the parameter's previous value as
  given (an SSM parameter's name), not moto's resolved value, which failed every update of a CDK
  stack (its ``BootstrapVersion`` is an SSM parameter) and made no update "without changes";
- :func:`_repeated_change_set`: a second change set of a name the stack already has is
  ``AlreadyExistsException`` (unless it is a retry: same template, same ClientToken);
- :func:`_create_change_set`: a ``CREATE`` change set for a stack that exists (and is not in
  ``REVIEW_IN_PROGRESS``) is ``ValidationError``; moto made a second stack of the same name.
"""

from __future__ import annotations

from typing import Any, Final

from constructs_fifo.local.emulator.patches.registry import original, replace

__all__ = ["NO_CHANGES_REASON", "patch"]

NO_CHANGES_REASON: Final = (
    "The submitted information didn't contain changes. Submit different information to create a change set."
)
"""AWS's StatusReason of a FAILED change set with no changes (moto 5.2.5 has it right)."""

_ARN_PREFIX: Final = "arn:"
_CLIENT_TOKEN: Final = (
    "_constructs_fifo_client_token"  # kept on moto's ChangeSet for a retried CreateChangeSet
)


def _errors() -> tuple[Any, Any]:
    # Imported on use: moto.cloudformation loads most of moto (see cloudformation.patch).
    from moto.cloudformation.exceptions import CloudFormationError, ValidationError  # noqa: PLC0415

    return CloudFormationError, ValidationError


def _error(code: str, message: str) -> Exception:
    """A CloudFormation error whose ``code`` is the botocore shape (its query code and status follow)."""
    cloudformation_error, _ = _errors()
    error: Exception = cloudformation_error(code, message)
    return error


def _stack_of(backend: Any, stack_name: str) -> Any:
    """The stack named (live) or with this id (also deleted), as DescribeStacks finds it."""
    return backend.get_stack(stack_name)


def _find_change_set(backend: Any, change_set_name: str, stack_name: str | None) -> Any | None:
    """The change set with this ARN, or with this name on ``stack_name``'s stack; ``None`` when none.

    AWS: API_DescribeChangeSet / API_DeleteChangeSet / API_ExecuteChangeSet, ChangeSetName "The name
    or Amazon Resource Name (ARN) of the change set", StackName "If you specified the name of a
    change set, specify the stack name or ID (ARN) of the change set": a name is unique per stack
    only. Raises ``ValidationError`` for a name without a stack (LocalStack's text for it; the AWS
    pages do not quote one) and for a stack that does not exist.
    """
    _, validation_error = _errors()
    if change_set_name.startswith(_ARN_PREFIX):
        change_set = backend.change_sets.get(change_set_name)
        if change_set is None or (
            stack_name and _stack_of(backend, stack_name).stack_id != change_set.stack_id
        ):
            return None
        return change_set
    if not stack_name:
        raise validation_error(
            message="StackName must be specified if ChangeSetName is not specified as an ARN."
        )
    stack_id = _stack_of(backend, stack_name).stack_id
    matches = [
        cs
        for cs in backend.change_sets.values()
        if cs.stack_id == stack_id and cs.change_set_name == change_set_name
    ]
    return matches[-1] if matches else None


def _describe_change_set(self: Any) -> Any:
    """DescribeChangeSet by ARN, or by name and stack; a miss is ``ChangeSetNotFound``.

    AWS: API_DescribeChangeSet (errors: ChangeSetNotFound, HTTP 404) and observed on AWS (SAM issue
    52, awscfncli issue 109): "ChangeSet [name] does not exist". moto 5.2.5 took the last change set
    of that name on any stack, and answered a miss with ``ValidationError``, which the CDK CLI does
    not read as "gone" (it waits for ``ChangeSetNotFoundException`` after a delete).
    """
    from moto.core.responses import ActionResult  # noqa: PLC0415

    name = self._get_param("ChangeSetName")
    change_set = _find_change_set(self.cloudformation_backend, name, self._get_param("StackName"))
    if change_set is None:
        raise _error("ChangeSetNotFoundException", f"ChangeSet [{name}] does not exist")
    return ActionResult(change_set)


def _delete_change_set(self: Any) -> Any:
    """DeleteChangeSet by ARN, or by name and stack; nothing to delete on an existing stack is no error.

    AWS: API_DeleteChangeSet (its only error is InvalidChangeSetStatus) and observed on AWS
    (ministack pull request 1625, measured): deleting a change set that does not exist on an
    existing stack succeeds; only a stack that does not exist is ``ValidationError``. ``cdk deploy``
    deletes ``cdk-deploy-change-set`` this way before every update. moto 5.2.5 deleted the first
    change set of that name on any stack, and raised ``UnboundLocalError`` (HTTP 500) when none.
    """
    from moto.core.responses import EmptyResult  # noqa: PLC0415

    backend = self.cloudformation_backend
    change_set = _find_change_set(backend, self._get_param("ChangeSetName"), self._get_param("StackName"))
    if change_set is not None:
        del backend.change_sets[change_set.change_set_id]
    return EmptyResult()


def _execute_change_set(self: Any) -> Any:
    """ExecuteChangeSet of an AVAILABLE change set only, which deletes the stack's other change sets.

    AWS: API_ExecuteChangeSet ("When you execute a change set, CloudFormation deletes all other
    change sets associated with the stack because they aren't valid for the updated stack"; error
    InvalidChangeSetStatus) and observed on AWS (aws-toolkit issues): "ChangeSet [ARN] cannot be
    executed in its current execution status of [OBSOLETE]"; the text for UNAVAILABLE (a FAILED
    change set) is inferred from it. moto 5.2.5 executed any change set, FAILED ones too, found by
    name on any stack, and kept the others.
    """
    from moto.core.responses import EmptyResult  # noqa: PLC0415

    backend = self.cloudformation_backend
    name = self._get_param("ChangeSetName")
    change_set = _find_change_set(backend, name, self._get_param("StackName"))
    if change_set is None:
        raise _error("ChangeSetNotFoundException", f"ChangeSet [{name}] does not exist")
    if change_set.execution_status != "AVAILABLE":
        raise _error(
            "InvalidChangeSetStatusException",
            f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current execution "
            f"status of [{change_set.execution_status}]",
        )
    backend.execute_change_set(change_set_name=change_set.change_set_id, stack_name=change_set.stack_id)
    for other in [cs for cs in backend.change_sets.values() if cs.stack_id == change_set.stack_id]:
        if other is not change_set:
            del backend.change_sets[other.change_set_id]
    return EmptyResult()


def _list_change_sets(self: Any) -> Any:
    """ListChangeSets of ``StackName``'s change sets only.

    AWS: API_ListChangeSets ("Returns the ID and status of each active change set for a stack";
    StackName required). moto 5.2.5 listed every stack's change sets.
    """
    from moto.core.responses import ActionResult  # noqa: PLC0415

    stack_id = _stack_of(self.cloudformation_backend, self._get_param("StackName")).stack_id
    summaries = [cs for cs in self.cloudformation_backend.change_sets.values() if cs.stack_id == stack_id]
    return ActionResult({"Summaries": summaries})


def _create_change_set_request(self: Any) -> Any:
    """CreateChangeSet with each ``UsePreviousValue`` parameter taken as the stack's previous input.

    AWS: API_Parameter, UsePreviousValue "use the existing parameter value that the stack is using
    for a given parameter key"; for an ``AWS::SSM::Parameter::Value<...>`` parameter that value is
    the SSM parameter's name (ResolvedValue is separate). moto 5.2.5 passed the resolved value,
    which its update then looked up as an SSM name: ``AttributeError`` (HTTP 500) on the second
    change set of every CDK stack with a code change. A parameter the stack took its default for
    is left out, so its default applies again. A change set repeating the stack's template and
    parameters is the FAILED no-change change set (:data:`NO_CHANGES_REASON`), never an error: moto
    5.2.5 answered one with explicit parameter values ``ValidationError`` "No updates are to be
    performed.", which is UpdateStack's answer (API_UpdateStack), not CreateChangeSet's.
    """
    from moto.cloudformation.responses import CloudFormationResponse  # noqa: PLC0415
    from moto.core.responses import ActionResult  # noqa: PLC0415

    if self._get_param("ChangeSetType", "CREATE") == "UPDATE" and self._get_param("Parameters"):
        stack = _stack_of(self.cloudformation_backend, self._get_param("StackName"))
        given: list[dict[str, Any]] = []
        for parameter in self._get_param("Parameters"):
            key = parameter.get("ParameterKey")
            if not parameter.get("UsePreviousValue") or "ParameterValue" in parameter:
                given.append(parameter)
            elif key in (stack.parameters or {}):
                given.append({"ParameterKey": key, "ParameterValue": stack.parameters[key]})
        self.params["Parameters"] = given
    self._validate_different_update = lambda *_args: None  # this request only
    repeated = _repeated_change_set(self)
    if repeated is not None:
        return ActionResult({"Id": repeated.change_set_id, "StackId": repeated.stack_id})
    created = original(CloudFormationResponse, "create_change_set")(self)
    change_set = self.cloudformation_backend.change_sets[created.result["Id"]]
    change_set.__dict__[_CLIENT_TOKEN] = self._get_param("ClientToken")
    return created


def _repeated_change_set(self: Any) -> Any | None:
    """A CreateChangeSet naming a change set the stack already has: a retry of it, or refused.

    AWS: API_CreateChangeSet (ChangeSetName "must be unique among all change sets that are
    associated with the specified stack"; ClientToken "so that CloudFormation knows that you're not
    attempting to create another change set with the same name") and observed on AWS (saksdirect/nova
    issue 10, landing-zone-accelerator issue 442): ``AlreadyExistsException``, "ChangeSet NAME cannot
    be created due to a mismatch with existing attribute Template" (or ``ClientToken``). The same
    template and the same ClientToken are taken as a retry and answered with the existing change
    set (inferred from ClientToken's description; not observed). moto 5.2.5 made a second change set
    of the name, which a lookup by name and stack could then not tell apart.
    """
    from moto.cloudformation.exceptions import AlreadyExistsException  # noqa: PLC0415

    backend = self.cloudformation_backend
    name = self._get_param("ChangeSetName")
    stacks = [stack for stack in backend.stacks.values() if stack.name == self._get_param("StackName")]
    existing = [cs for cs in backend.change_sets.values() if stacks and cs.stack_id == stacks[0].stack_id]
    existing = [cs for cs in existing if cs.change_set_name == name]
    if not existing:
        return None
    if self._get_bool_param("UsePreviousTemplate", False):
        body = stacks[0].template
    elif self._get_param("TemplateURL"):
        body = self._get_stack_from_s3_url(self._get_param("TemplateURL"))
    else:
        body = self._get_param("TemplateBody")
    token = self._get_param("ClientToken")
    for attribute, same in (
        ("Template", existing[-1].template == body),
        ("ClientToken", token is not None and existing[-1].__dict__.get(_CLIENT_TOKEN) == token),
    ):
        if not same:
            raise AlreadyExistsException(
                f"ChangeSet {name} cannot be created due to a mismatch with existing attribute {attribute}"
            )
    return existing[-1]


def _create_change_set(self: Any, stack_name: str, change_set_name: str, *args: Any, **kwargs: Any) -> Any:
    """CreateChangeSet; a CREATE change set for a stack that already exists is refused.

    AWS: API_CreateChangeSet (ChangeSetType CREATE "for a stack that doesn't exist or an existing
    stack that has a status of REVIEW_IN_PROGRESS") and observed on AWS (ecs_composex issue 785):
    ``ValidationError``, "Stack [NAME] already exists and cannot be created again with the changeSet
    [CHANGE SET].". moto 5.2.5 made a second stack of the same name. A CREATE change set for a stack
    in REVIEW_IN_PROGRESS (one whose CREATE change set was never executed) replaces that placeholder
    stack and its change sets (on AWS the stack keeps its id; here it gets a new one).
    """
    _, validation_error = _errors()
    change_set_type = kwargs.get("change_set_type", args[3] if len(args) > 3 else "CREATE")
    if change_set_type == "CREATE":
        for stack in list(self.stacks.values()):
            if stack.name != stack_name:
                continue
            if stack.status != "REVIEW_IN_PROGRESS":
                raise validation_error(
                    message=f"Stack [{stack_name}] already exists and cannot be created again with "
                    f"the changeSet [{change_set_name}]."
                )
            del self.stacks[stack.stack_id]
            for cs in [cs for cs in self.change_sets.values() if cs.stack_id == stack.stack_id]:
                del self.change_sets[cs.change_set_id]
    from moto.cloudformation.models import CloudFormationBackend  # noqa: PLC0415

    return original(CloudFormationBackend, "create_change_set")(
        self, stack_name, change_set_name, *args, **kwargs
    )


def patch() -> None:
    """Apply the change-set patches (item 8 of the package docstring)."""
    # Imported here, not at the top: see cloudformation.patch.
    from moto.cloudformation.models import CloudFormationBackend  # noqa: PLC0415
    from moto.cloudformation.responses import CloudFormationResponse  # noqa: PLC0415

    replace(CloudFormationResponse, "describe_change_set", _describe_change_set)
    replace(CloudFormationResponse, "delete_change_set", _delete_change_set)
    replace(CloudFormationResponse, "execute_change_set", _execute_change_set)
    replace(CloudFormationResponse, "list_change_sets", _list_change_sets)
    replace(CloudFormationResponse, "create_change_set", _create_change_set_request)
    replace(CloudFormationBackend, "create_change_set", _create_change_set)
