"""Errors speak the caller's language: the API names the argument, the CLI the flag
(issue 16, item 6)."""

import textwrap

import pytest

import privet
from privet import mechanisms
from privet.cli import main
from privet.core.errors import InputError, PrivetError, advice


def test_one_error_carries_both_languages():
    err = InputError("give " + advice("length=n", "--length N") + ".")
    assert str(err) == "give length=n." and err.for_cli() == "give --length N."
    wrapped = err.with_prefix("in 'mine.py': ")
    assert type(wrapped) is InputError
    assert str(wrapped) == "in 'mine.py': give length=n."
    assert wrapped.for_cli() == "in 'mine.py': give --length N."


def cli_error(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    return capsys.readouterr().err


def test_exact_asks_for_the_flag_on_the_command_line_and_the_argument_in_python(capsys):
    text = cli_error(capsys, "exact", "faier.discrete_noisy_max")
    assert "--length N" in text and "length=n" not in text and "Domain(" not in text
    with pytest.raises(PrivetError, match="length=n"):
        privet.exact(mechanisms.get("faier.discrete_noisy_max"))


def test_continuous_noise_is_named_as_the_cause_whatever_the_length(capsys):
    for argv in (("exact", "statdp.noisy_max_v1a"),
                 ("exact", "statdp.noisy_max_v1a", "--length", "3")):
        text = cli_error(capsys, *argv)
        assert "cannot enumerate" in text and "laplace" in text
        assert "privet detect or privet search" in text and "--length" not in text


def test_a_missing_claim_names_the_epsilon_flag(capsys, tmp_path):
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        import privet

        @privet.mechanism()
        def noisy_sum(noise, x, *, epsilon=1.0):
            return x.sum() + noise.laplace(1 / epsilon)
    """))
    text = cli_error(capsys, "detect", f"{tmp_path / 'mine.py'}:noisy_sum")
    assert "--epsilon E" in text and "epsilon=..." not in text
    with pytest.raises(PrivetError, match=r"epsilon=\.\.\."):
        privet.detect(privet.from_blackbox(lambda x: x, name="bare"))
