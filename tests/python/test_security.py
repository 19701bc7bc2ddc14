"""The key_file option: key files are checked, and a keyed client of a
cluster that runs without a key is told so at once (PermissionDenied)."""

import os

import pytest

import kiln
from kiln import _kiln


def test_keygen_writes_a_private_key_file(tmp_path):
    path = tmp_path / "cluster.key"
    public = kiln.keygen(str(path))
    assert len(public) == 40
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert f"public-key = {public}" in path.read_text()
    with pytest.raises(kiln.InvalidArgument, match="--force"):
        kiln.keygen(str(path))
    assert kiln.keygen(str(path), force=True) != public


def test_a_key_file_others_can_read_is_refused(tmp_path, cluster):
    path = tmp_path / "open.key"
    kiln.keygen(str(path))
    os.chmod(path, 0o644)
    with pytest.raises(kiln.InvalidArgument, match="chmod 600"):
        kiln.session_types(cluster, timeout=10, key_file=str(path))


def test_keyed_client_of_a_plaintext_cluster_is_refused_quickly(tmp_path, cluster):
    path = tmp_path / "cluster.key"
    kiln.keygen(str(path))
    # A 60 s request timeout: the refusal is a PermissionDenied, not a Timeout.
    client = _kiln.Client(cluster.endpoint, 60.0, "", str(path))
    with pytest.raises(kiln.PermissionDenied, match="refused by authentication"):
        client.list_cluster()
