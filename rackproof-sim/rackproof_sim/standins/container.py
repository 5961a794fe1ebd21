"""What a namespace cannot have for sparkrun's runtime on a Spark: the Docker daemon and its
image store (`docker info`, `docker image inspect`, `docker --version`, with the images of the
node's model) and the NVIDIA Container Toolkit's CLI (`nvidia-ctk --version`), in the real
formats. Access is the real thing: like the Docker socket, the stand-in answers root and the
members of the node's docker group, and anyone else gets Docker's permission error."""

from __future__ import annotations

import grp
import os
import sys

from . import model
from rackproof_sim.formats.docker import render_image_id, render_no_access, resolved

DOCKER_VERSION = "28.3.3"
CTK_VERSION, CTK_COMMIT = "1.17.8", "f202b80a9b9d0db00d9b1d73c0128c8962c55f4d"


def _may_use_docker() -> bool:
    if os.geteuid() == 0:
        return True
    try:
        return grp.getgrnam("docker").gr_gid in os.getgroups()
    except KeyError:
        return False


def _docker(args: list[str], images: dict[str, str]) -> int:
    if args == ["--version"]:
        sys.stdout.write(f"Docker version {DOCKER_VERSION}, build 980b856\n")
        return 0
    if not _may_use_docker():
        sys.stderr.write(render_no_access(f"images/{args[-1]}/json" if args[:2] == ["image", "inspect"] else "info"))
        return 1
    if args == ["info"]:
        sys.stdout.write(f"Client: Docker Engine - Community\n Version:    {DOCKER_VERSION}\n Context:    default\n"
                         f" Debug Mode: false\n\nServer:\n Containers: 0\n  Running: 0\n  Paused: 0\n  Stopped: 0\n"
                         f" Images: {len(images)}\n Server Version: {DOCKER_VERSION}\n"
                         f" Runtimes: io.containerd.runc.v2 nvidia runc\n Default Runtime: runc\n")
        return 0
    if args[:2] == ["image", "inspect"] and args[2:4] == ["--format", "{{.Id}}"] and len(args) == 5:
        text, code = render_image_id(args[4], images.get(resolved(args[4])))
        (sys.stdout if code == 0 else sys.stderr).write(text)
        return code
    sys.stderr.write("rackproof sim stand-in: only `docker info`, `docker --version` and "
                     "`docker image inspect --format '{{.Id}}' IMAGE` are modelled\n")
    return 1


def run(tool: str, args: list[str]) -> int:
    if tool == "docker":
        return _docker(args, {resolved(k): v for k, v in model().get("docker_images", {}).items()})
    if args == ["--version"]:
        sys.stdout.write(f"NVIDIA Container Toolkit CLI version {CTK_VERSION}\ncommit: {CTK_COMMIT}\n")
        return 0
    sys.stderr.write("rackproof sim stand-in: only `nvidia-ctk --version` is modelled\n")
    return 1
