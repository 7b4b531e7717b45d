"""What a newcomer meets first (issue #48): optional parts missing say how to install them, output
paths and formats are refused up front, and what the terminal and the report print reads as
mathematics and plain words, not as sympy or private notation."""

import sys

import pytest

from helpers.cli import call, one_line_error


def test_conform_of_a_users_function_without_torch_is_bad_input_with_the_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)          # as if torch were not installed
    code, out, err = call("conform", "zigzag", "--impl", "os:getcwd")
    assert code == 64 and out == "", err
    line = one_line_error(err)
    assert "needs torch" in line and "pip install -e '.[torch]'" in line
