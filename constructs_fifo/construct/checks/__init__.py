"""The check step: the props' rules (:mod:`.validation`), and the step the construct runs first, which
fills in the defaults that depend on other props, raises every problem at once and warns (:mod:`.props`).
Imports the settings and code rooms and the function's environment names (``resources.function``)."""
