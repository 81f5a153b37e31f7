"""The construct's settings: every default and limit of a prop, read from the runtime's settings spec
(:mod:`.defaults`), props read at synth time with one round trip to Node each (:mod:`.tokens`), and the
docs' props tables written from the spec (:mod:`.props_table`). Imports no other room."""
