"""Smoke run of `kiln bench actions` (seconds): its JSON has the campaign row
with the fields README.md documents, no invalid module and no crash, and a
timing row for every action that ran."""

from bench_json import run_bench


def test_actions_campaign_reports_zero_invalid_modules_and_crashes():
    report = run_bench("actions", "--episodes", "30", "--steps", "10", "--csmith", "1",
                       "--seed", "3", timeout=400)
    assert report["title"].startswith("kiln bench actions")
    (campaign,) = [row for row in report["rows"] if row.get("figure") == "campaign"]
    for field in ("episodes", "steps", "invalid_modules", "crashes", "errors", "refusals",
                  "seconds", "steps_per_s"):
        assert field in campaign, (field, campaign)
    assert campaign["episodes"] == 30 and campaign["steps"] == 300, campaign
    assert campaign["invalid_modules"] == 0 and campaign["crashes"] == 0, report["rows"]
    assert campaign["errors"] == 0, report["rows"]
    assert not [row for row in report["rows"] if row.get("figure") == "failure"]
    passes = [row for row in report["rows"] if row.get("figure") == "pass"]
    assert sum(row["runs"] for row in passes) == campaign["steps"]
    for row in passes:
        assert row["runs"] == 0 or 0 <= row["mean_ms"] <= row["max_ms"], row
