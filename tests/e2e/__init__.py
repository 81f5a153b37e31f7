"""End-to-end tests: the local emulator, the real CDK CLI, the demo."""
