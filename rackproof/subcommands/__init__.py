"""The rackproof command's own subcommands beside running the suite: discover, doctor, sudoers."""
