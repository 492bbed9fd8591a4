"""Every command has a description and every flag a help text (issue 16, item 8)."""

import argparse

from privet.cli import build_parser


def _subcommands(parser=None, prefix=""):
    """Every (sub)command's parser by its name, nested ones too (``floats porosity``)."""
    parser = parser or build_parser()[0]
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, p in action.choices.items():
                out[prefix + name] = p
                out.update(_subcommands(p, f"{prefix}{name} "))
    return out


def test_every_command_and_flag_explains_itself():
    missing = []
    for name, p in _subcommands().items():
        if not p.description and " " not in name:
            missing.append(f"privet {name}: no description")
        for a in p._actions:
            if a.option_strings and a.dest != "help" and not (a.help or "").strip():
                missing.append(f"privet {name} {a.option_strings[0]}: no help")
    assert not missing, missing


def test_numeric_flags_state_their_default():
    for name, p in _subcommands().items():
        for a in p._actions:
            if a.option_strings and isinstance(a.default, (int, float)) and \
                    not isinstance(a.default, bool) and a.default is not None:
                assert "default" in a.help, f"privet {name} {a.option_strings[0]}"


def test_list_has_no_seed_and_every_computing_command_does():
    cmds = _subcommands()
    assert "seed" not in {a.dest for a in cmds["list"]._actions}
    for name in ("sample", "detect", "search", "exact", "pufferfish", "synth", "suite"):
        dests = {a.dest for a in cmds[name]._actions}
        assert {"json", "seed", "no_progress"} <= dests, name
