"""The one play loop for every game, the run around it (device, profile, journal,
summary), and the conformance checks every registered game must pass."""
