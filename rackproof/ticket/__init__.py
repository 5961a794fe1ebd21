"""The change-control ticket and its history: the signed bundle, runs remembered, snapshots and what a
change did, recordings made safe to send, the exit status."""
