"""puzzle-agent: plays grid puzzle games on Android phones over ADB."""

__version__ = "0.1.0"
