"""memgit: the agent's memory as a git repo, changed only through reviewed proposals."""
__version__ = "0.1.0"
