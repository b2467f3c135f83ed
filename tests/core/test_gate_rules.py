"""The gate's rules as typed: what they mean, and errors that name the rule at fault."""

from __future__ import annotations

import pytest

from dialjudge.core.errors import ConfigError
from dialjudge.core.gate_rules import (
    MaxFailuresRule,
    MinRule,
    NoWorseThanRule,
    parse_max_failures,
    parse_min_rule,
    parse_no_worse_than,
    parse_rules,
)


@pytest.mark.parametrize(("text", "rule"), [
    ("spearman=0.3", MinRule("spearman", 0.3)),
    (" Pearson = -0.2 ", MinRule("pearson", -0.2)),
    ("kendall=0", MinRule("kendall", 0.0)),
    ("kappa=0.4", MinRule("kappa", 0.4)),
    ("agreement=80%", MinRule("agreement", 0.8)),
    ("agreement=0.8", MinRule("agreement", 0.8)),
])
def test_min_rules_read_as_typed(text: str, rule: MinRule) -> None:
    assert parse_min_rule(text) == rule


@pytest.mark.parametrize(("text", "message"), [
    ("spearmann=0.3", "--min 'spearmann=0.3': 'spearmann' is not one of spearman, pearson, kendall, kappa, agreement"),
    ("spearman", "--min 'spearman': expected STATISTIC=THRESHOLD"),
    ("=0.3", "--min '=0.3': expected STATISTIC=THRESHOLD"),
    ("spearman=high", "--min 'spearman=high': 'high' is not a number"),
    ("spearman=nan", "--min 'spearman=nan': 'nan' is not a finite number"),
    ("spearman=1.5", "--min 'spearman=1.5': the threshold 1.5 is outside spearman's range (-1 to 1)"),
    ("kappa=40%", "--min 'kappa=40%': only agreement takes a percentage"),
    ("agreement=120%", "--min 'agreement=120%': the threshold 120% is outside agreement's range"),
    ("agreement=-0.1", "outside agreement's range (0 to 1, or 0% to 100%)"),
])
def test_a_wrong_min_rule_is_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_min_rule(text)
    assert message in str(caught.value)


@pytest.mark.parametrize(("value", "share"), [("2%", 0.02), ("0.02", 0.02), (0.5, 0.5), ("0%", 0.0), (1, 1.0)])
def test_max_failures_is_a_share(value: object, share: float) -> None:
    assert parse_max_failures(value) == MaxFailuresRule(pytest.approx(share))  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "message"), [
    ("2", "--max-failures '2': a share is at most 1; write 2% for 2 percent"),
    ("lots", "--max-failures 'lots': 'lots' is not a number"),
    ("150%", "--max-failures '150%': the share must be from 0% to 100%"),
    (True, "expected a share of the judgments"),
])
def test_a_wrong_failure_share_is_named(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_max_failures(value)
    assert message in str(caught.value)


def test_no_worse_than_names_a_run() -> None:
    assert parse_no_worse_than("12") == NoWorseThanRule(12, "spearman")
    assert parse_no_worse_than(3, coefficient="kendall") == NoWorseThanRule(3, "kendall")
    for bad, message in (("run3", "expected a run id"), ("0", "run ids start at 1")):
        with pytest.raises(ConfigError, match=f"--no-worse-than '{bad}': {message}"):
            parse_no_worse_than(bad)
    with pytest.raises(ConfigError, match="'kappa' is not one of spearman, pearson, kendall"):
        parse_no_worse_than(3, coefficient="kappa")


def test_rules_of_a_file_are_named_by_their_key() -> None:
    rules = parse_rules(["spearman=0.3"], no_worse_than=[4], max_failures="2%")
    assert rules == (MinRule("spearman", 0.3), NoWorseThanRule(4), MaxFailuresRule(0.02))
    with pytest.raises(ConfigError, match=r"^exp.toml: gate.max_failures '5': a share is at most 1"):
        parse_rules([], max_failures=5, where="exp.toml: gate")
    with pytest.raises(ConfigError, match=r"^exp.toml: gate.min 'rho=0.3'"):
        parse_rules(["rho=0.3"], where="exp.toml: gate")


def test_rule_texts_say_what_is_tested() -> None:
    assert MinRule("spearman", 0.3).text == "spearman ≥ 0.3 (lower CI bound)"
    assert MinRule("agreement", 0.8).text == "agreement ≥ 80% (lower CI bound)"
    assert NoWorseThanRule(4).text == "no worse than run 4 (paired test, Δρ)"
    assert MaxFailuresRule(0.02).text == "failed judgments ≤ 2%"
