"""rackproof.probes.sshkeys against ssh_keygen_lf_local_authorized_keys_two.txt: OpenSSH 9.2p1
`ssh-keygen -lf` of an authorized_keys with a comment line, an ED25519 and an RSA key
(generated for the sample). A missing or empty file makes it exit 255 with nothing on stdout."""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.sshkeys import AUTHORIZED_KEYS, parse_key_fingerprints

SAMPLES = Path(__file__).parent / "samples"


def test_two_keys():
    assert parse_key_fingerprints((SAMPLES / "ssh_keygen_lf_local_authorized_keys_two.txt").read_text()) == (
        "SHA256:EbCdRcSY+8lh6gI0vR57qvcgVVj+moQ2mxyCTzbPXy0 (ED25519) nvidia@thor-1",
        "SHA256:MQUkoq4TFxWGYqWJXrBwaRZDBQGHae3tQWiv/dXeMuc (RSA) bench@controller")


def test_no_file_or_no_key_is_no_key():
    assert parse_key_fingerprints("") == ()
    assert 255 in AUTHORIZED_KEYS.ok_exit


def test_a_comment_with_spaces_and_none():
    line = "256 SHA256:EbCdRcSY+8lh6gI0vR57qvcgVVj+moQ2mxyCTzbPXy0 {} (ED25519)"
    assert parse_key_fingerprints(line.format("lab key 2")) == (
        "SHA256:EbCdRcSY+8lh6gI0vR57qvcgVVj+moQ2mxyCTzbPXy0 (ED25519) lab key 2",)
    assert parse_key_fingerprints(line.replace(" {}", "")) == (
        "SHA256:EbCdRcSY+8lh6gI0vR57qvcgVVj+moQ2mxyCTzbPXy0 (ED25519)",)


@pytest.mark.parametrize("text", ["ssh-ed25519 AAAAC3Nz nvidia@thor-1\n", "256 MD5:aa:bb x (RSA)\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_key_fingerprints(text)
