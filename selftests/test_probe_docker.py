"""rackproof.probes.docker against real outputs of the docker CLI, gathered from public reports:

- docker_image_inspect_format_id.txt: an image's id, "sha256:" and 64 hex digits
  (github.com/paritytech/srtool/issues/8: `docker inspect IMAGE | jq -r ".[0].Id"`, the value
  `--format '{{.Id}}'` prints);
- docker_image_inspect_no_such_image_cli.txt: the CLI's "Error: No such image: 2b81d178e32a"
  (github.com/moby/moby/issues/18424, docker 1.9.1, `docker inspect --type image`);
- docker_image_inspect_no_such_image_daemon.txt: "Error response from daemon: No such image:
  hello:latest" (github.com/gabrieldemarmiesse/python-on-whales/issues/557, `docker image inspect hello`);
- docker_permission_denied_socket.txt: a login outside the docker group
  (github.com/Skatteetaten/vagrant-hashistack/issues/2, `docker images`, API v1.40).
The simulated rack's stand-in prints through render_image_id and render_no_access; they read back.
"""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.docker import IMAGE_ID, Image, parse_image_id
from rackproof_sim.formats.docker import render_image_id, render_no_access

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_an_image_the_runtime_holds():
    assert parse_image_id(read("docker_image_inspect_format_id.txt")) == \
        Image("sha256:b731d51f4cef2a756867ebd5c69939cddaf0342424ead4e3e5fa497532003ddc")


@pytest.mark.parametrize("name", ["docker_image_inspect_no_such_image_cli.txt",
                                  "docker_image_inspect_no_such_image_daemon.txt"])
def test_an_image_it_does_not_hold(name):
    assert parse_image_id(read(name)) == Image(None)


def test_a_login_that_may_not_use_docker():
    found = parse_image_id(read("docker_permission_denied_socket.txt"))
    assert found.id is None and "not in the docker group" in found.unusable


@pytest.mark.parametrize("text", ["sh: 1: docker: not found\n", "bash: docker: command not found\n"])
def test_no_docker_at_all(text):
    assert parse_image_id(text) == Image(None, "docker is not installed (not on the login's PATH)")


def test_the_command_asks_as_sparkrun_does():
    assert IMAGE_ID.command(image="nvcr.io/nvidia/vllm:25.09-py3") == \
        "docker image inspect --format '{{.Id}}' nvcr.io/nvidia/vllm:25.09-py3 2>&1"


images = st.from_regex(r"[a-z0-9]{1,10}(/[a-z0-9]{1,10}){0,2}(:[a-z0-9.]{1,8})?", fullmatch=True)


@given(images, st.none() | st.from_regex(r"sha256:[0-9a-f]{64}", fullmatch=True))
def test_what_the_stand_in_prints_reads_back(image, image_id):
    text, code = render_image_id(image, image_id)
    assert parse_image_id(text) == Image(image_id) and code == (0 if image_id else 1)
    assert parse_image_id(render_no_access(f"images/{image}/json")).unusable


@pytest.mark.parametrize("text", ["", "sha256:abc\n", "[]\n", "Error: No such container: x\n",
                                  "sha256:" + "a" * 64 + "\nsha256:" + "b" * 64 + "\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_image_id(text)
