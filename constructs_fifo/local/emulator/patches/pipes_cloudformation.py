"""Fidelity patch of moto's CloudFormation: an ``AWS::Pipes::Pipe`` is created, as configuration only.

moto 5.2.5 has a Pipes model (CreatePipe, DescribePipe, ListPipes...) that stores a pipe and runs
nothing, but its CloudFormation knows no ``AWS::Pipes::Pipe``: a stack skipped the pipe with a
warning (DescribeStackResources listed a row without logical id or type, ListPipes was empty), and
a ``Fn::GetAtt`` of the pipe in the outputs failed the whole stack. Here the resource type maps to
:class:`PipeResource`, which creates the pipe in moto's Pipes backend. Nothing moves records: the
local pipe runner (:mod:`constructs_fifo.local.pipes`) reads the pipe and does that.
"""

from __future__ import annotations

from typing import Any, Final

from moto.pipes.models import Pipe, pipes_backends

from constructs_fifo.local.emulator.patches.registry import original, replace

__all__ = ["PIPE_TYPE", "PipeResource", "patch"]

PIPE_TYPE: Final = "AWS::Pipes::Pipe"
#: AWS: aws-resource-pipes-pipe, Name: "Maximum: 64", pattern ``[\.\-_A-Za-z0-9]+``.
_NAME_MAX: Final = 64
#: The attributes ``Fn::GetAtt`` returns (aws-resource-pipes-pipe, "Return values").
_ATTRIBUTES: Final = ("Arn", "CreationTime", "CurrentState", "LastModifiedTime", "StateReason")


def _pipe_name(resource_name: str) -> str:
    """A generated name within 64 characters, keeping the random suffix that makes it unique."""
    if len(resource_name) <= _NAME_MAX:
        return resource_name
    head, _, suffix = resource_name.rpartition("-")
    return f"{head[: _NAME_MAX - len(suffix) - 1]}-{suffix}"


class PipeResource:
    """The stack's view of a pipe in moto's Pipes backend (its ``Ref`` is the pipe's name)."""

    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe

    @property
    def physical_resource_id(self) -> str:
        return str(self.pipe.name)

    def is_created(self) -> bool:
        """Created at once: CloudFormation waits for nothing (the pipe runs nowhere here)."""
        return True

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in _ATTRIBUTES

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException  # noqa: PLC0415

        if attribute_name == "Arn":
            return self.pipe.arn
        if attribute_name == "CurrentState":
            return self.pipe.current_state
        if attribute_name == "CreationTime":
            return self.pipe.creation_time
        if attribute_name == "LastModifiedTime":
            return self.pipe.last_modified_time
        if attribute_name == "StateReason":
            return self.pipe.state_reason or ""
        raise UnformattedGetAttTemplateException()

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> PipeResource:
        properties = cloudformation_json.get("Properties", {})
        pipe = pipes_backends[account_id][region_name].create_pipe(
            name=properties.get("Name") or _pipe_name(resource_name),
            description=properties.get("Description"),
            desired_state=properties.get("DesiredState"),
            source=properties["Source"],
            source_parameters=properties.get("SourceParameters"),
            enrichment=properties.get("Enrichment"),
            enrichment_parameters=properties.get("EnrichmentParameters"),
            target=properties["Target"],
            target_parameters=properties.get("TargetParameters"),
            role_arn=properties["RoleArn"],
            tags=properties.get("Tags"),
            log_configuration=properties.get("LogConfiguration"),
            kms_key_identifier=properties.get("KmsKeyIdentifier"),
        )
        return cls(pipe)

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: PipeResource,
        new_resource_name: str,
        cloudformation_json: Any,
        account_id: str,
        region_name: str,
    ) -> PipeResource:
        # Replaced, as moto's own rules and buses are on update (AWS updates most properties in
        # place; locally the runner reads the pipe afresh on every run, so the two read alike).
        original_resource.delete(account_id, region_name)
        return cls.create_from_cloudformation_json(
            new_resource_name, cloudformation_json, account_id, region_name
        )

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        backend = pipes_backends[account_id][region_name]
        if resource_name in backend.pipes:
            backend.delete_pipe(resource_name)

    def delete(self, account_id: str, region_name: str) -> None:
        self.delete_from_cloudformation_json(self.pipe.name, {}, account_id, region_name)


def _resource_class_from_type(resource_type: str) -> Any:
    # AWS: aws-resource-pipes-pipe (CloudFormation creates pipes). moto 5.2.5 returned None for
    # the type ("No Moto CloudFormation support for AWS::Pipes::Pipe") and skipped the resource.
    from moto.cloudformation import parsing  # noqa: PLC0415 - loaded by patch() already

    if resource_type == PIPE_TYPE:
        return PipeResource
    return original(parsing, "resource_class_from_type")(resource_type)


def patch() -> None:
    """Map ``AWS::Pipes::Pipe`` to :class:`PipeResource` in moto's CloudFormation."""
    # Imported here, as in .cloudformation: moto.cloudformation loads most of moto's services.
    from moto.cloudformation import parsing  # noqa: PLC0415

    replace(parsing, "resource_class_from_type", _resource_class_from_type)
