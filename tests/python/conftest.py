"""Shared fixtures: a LocalCluster per test module, and the skip rule for
session types that the workers of this build do not offer (yet)."""

import os
import sys
from pathlib import Path

import pytest

# gymnasium and Stable-Baselines3 come from the shared third_party folder
# when they are not installed: appended, so an installed copy comes first;
# before kiln is imported, whose envs are gymnasium's when it imports.
_THIRD_PARTY = Path(
    os.environ.get("KILN_THIRD_PARTY_PYTHON")
    or Path(__file__).resolve().parents[2].parent / "shared" / "third_party" / "python"
)
if _THIRD_PARTY.is_dir() and str(_THIRD_PARTY) not in sys.path:
    sys.path.append(str(_THIRD_PARTY))

import kiln  # noqa: E402


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
