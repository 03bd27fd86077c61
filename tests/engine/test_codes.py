"""The finding-code registry: every declaration is complete and every action has a builder."""

from repair import codes, targets
from repair.codes import ANY, NONE, Severity
from repair.plan import BUILDERS


def test_every_code_has_a_severity_for_every_target():
    for code in codes.BY_NAME.values():
        for target in targets.TARGETS:
            assert isinstance(code.severity_for(target), Severity), (code.name, target)


def test_declarations_name_only_known_targets():
    known = set(targets.TARGETS) | {ANY}
    for code in codes.BY_NAME.values():
        for table in (code.severity, code.rule, code.lenient, code.actions_by_target):
            assert set(table) <= known, code.name


def test_every_action_has_exactly_one_builder():
    declared = {
        (code.name, action)
        for code in codes.BY_NAME.values()
        for target in (*targets.TARGETS, "")
        for action in code.actions_for(target)
        if action != NONE
    }
    assert declared == set(BUILDERS)


def test_actions_under_a_target_are_the_same_actions_reordered():
    for code in codes.BY_NAME.values():
        for acts in code.actions_by_target.values():
            assert sorted(acts) == sorted(code.actions), code.name


def test_severity_sorts_worst_first_and_compares_as_text():
    assert sorted(codes.Severity, key=lambda s: s.rank) == [
        Severity.ERROR,
        Severity.WARNING,
        Severity.INFO,
    ]
    assert Severity.ERROR == "error" and f"{Severity.WARNING}" == "warning"


def test_lenient_variant_only_relaxes():
    for code in codes.BY_NAME.values():
        for target, sev in code.lenient.items():
            assert sev.rank >= code.severity_for(target).rank, (code.name, target)


def test_every_code_names_a_count_of_its_findings():
    """The TUI's summary line ("2 duplicate results · 1 result stamped before its call")
    reads these: a new code without them would show as its bare name."""
    for code in codes.BY_NAME.values():
        assert code.counted is not None, code.name
        one, many = code.counted
        assert one and many and one != code.name, code.name
        # "1 ..." and "2 ..." read differently ("1 unanswered tool results" did not)
        assert one != many, code.name


def test_the_provider_errors_a_code_explains_are_rules_explain_knows():
    """`histview explain` lists, for each 400 text, the codes declared to lead to it: a code
    naming an unknown rule id (a typo) would silently drop out of that list."""
    from repair.explain import RULES

    ids = {r.id for r in RULES}
    for code in codes.BY_NAME.values():
        assert set(code.explains) <= ids, code.name
    # the rules no code leads to are the ones histview does not check (Responses reasoning
    # items), and their note says so
    for r in RULES:
        assert r.codes or "does not check" in r.note, r.id
