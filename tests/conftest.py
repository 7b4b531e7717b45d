import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


import os

import pytest


@pytest.fixture(autouse=True)
def _same_working_directory():
    """Each test starts in the directory the run started in: messages name files relative to it
    (`examples/matvec.py:26`), so a test that moves elsewhere must not move the ones after it."""
    here = os.getcwd()
    yield
    os.chdir(here)
