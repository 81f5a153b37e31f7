"""End-to-end tests of the examples under examples/: each deployed to an emulator of its own."""
