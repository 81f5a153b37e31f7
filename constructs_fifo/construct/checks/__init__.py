"""The check step: a prop against its settings row's limits (:mod:`.limits`), the props checked by
value and the warnings (:mod:`.validation`), the function's own props (:mod:`.function_props`), and the
step the construct runs first, which fills in the defaults that depend on other props, raises every
problem at once and warns (:mod:`.props`). Imports the settings and code rooms and the function's
environment names (``resources.function``)."""
