"""Shared fixtures: a LocalCluster per test module, and the skip rule for
session types that the workers of this build do not offer (yet)."""

import pytest

import kiln


@pytest.fixture(scope="module")
def cluster():
    with kiln.LocalCluster(workers=1, slots=2) as local:
        yield local


def require_type(cluster, session_type):
    """Skips the calling test, with the reason, unless a worker hosts `session_type`."""
    offered = kiln.session_types(cluster, timeout=10)
    if session_type not in offered:
        pytest.skip(
            f"session type {session_type!r} is not offered by this build's workers "
            f"(they offer {', '.join(offered)})"
        )
