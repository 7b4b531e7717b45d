"""What every test gets: the working directory it started in (messages name files relative to it,
`examples/matvec.py:26`, so a test that moves elsewhere must not move the tests after it)."""

import os

import pytest


@pytest.fixture(autouse=True)
def _same_working_directory():
    here = os.getcwd()
    yield
    os.chdir(here)
