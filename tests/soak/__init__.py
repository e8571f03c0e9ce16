"""The long fault soak behind `make soak`: issue 11's targets, not part of the pytest run."""
