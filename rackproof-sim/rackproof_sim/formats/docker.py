"""What Docker's CLI prints for an image inspect and for a login outside the docker group
(parsed by rackproof.probes.docker)."""

from __future__ import annotations


def resolved(image: str) -> str:
    """The reference as Docker resolves it: an image without tag or digest is NAME:latest."""
    return image if ":" in image.rsplit("/", 1)[-1] or "@" in image else f"{image}:latest"


def render_image_id(image: str, image_id: str | None) -> tuple[str, int]:
    """What `docker image inspect --format '{{.Id}}' IMAGE` prints (stdout when found, else
    stderr) and its exit status, as Docker 28 does: the daemon names the image as it resolved it."""
    if image_id is not None:
        return f"{image_id}\n", 0
    return f"Error response from daemon: No such image: {resolved(image)}\n", 1


def render_no_access(path: str) -> str:
    """Docker 28's error for a login outside the docker group (the socket is root:docker, 660),
    asking the API for `path` ("info", "images/IMAGE/json"); clients before 25 began it "Got "."""
    return ("permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: "
            f'Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.51/{path}": dial unix /var/run/docker.sock: connect: '
            "permission denied\n")
