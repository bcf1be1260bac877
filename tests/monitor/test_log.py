"""Log setup: JSON off a TTY, console on one, rank fields from torchrun's environment, routed through stdlib logging."""

from __future__ import annotations

import io
import json
import logging

import structlog

from monitor.log import LOGGER_NAME, make_logger, rank_fields, renderer


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def render(fmt: str, stream: io.StringIO) -> str:
    return renderer(fmt, stream)(None, "error", {"event": "budget_exceeded", "region": "layers", "count": 3})


def test_auto_renders_json_when_the_stream_is_not_a_tty():
    assert json.loads(render("auto", io.StringIO())) == {"event": "budget_exceeded", "region": "layers", "count": 3}


def test_auto_renders_human_readable_text_on_a_tty():
    line = render("auto", Tty())
    assert line.startswith("budget_exceeded") or "budget_exceeded" in line
    assert "region=layers" in line and not line.lstrip().startswith("{")


def test_rank_fields_come_from_torchrun_variables_that_are_set():
    assert rank_fields({"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}) == {
        "rank": 3,
        "local_rank": 1,
        "world_size": 8,
    }
    assert rank_fields({"RANK": "x"}) == {}


def test_events_go_through_the_stdlib_logger_with_rank_fields(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    log = make_logger("json", environ={"RANK": "2", "WORLD_SIZE": "4"})
    log.error("budget_exceeded", region="layers", count=3)
    records = [r for r in caplog.records if r.name == LOGGER_NAME]
    payload = json.loads(records[-1].getMessage())
    assert payload["event"] == "budget_exceeded" and payload["rank"] == 2 and payload["world_size"] == 4
    assert payload["level"] == "error" and records[-1].levelno == logging.ERROR
    assert isinstance(log, structlog.stdlib.BoundLogger)


def test_events_print_without_logging_setup_and_go_to_the_application_once_it_configures_logging():
    std, root = logging.getLogger(LOGGER_NAME), logging.getLogger()
    saved = (std.handlers[:], root.handlers[:])
    std.handlers.clear()
    root.handlers.clear()
    own, app = io.StringIO(), io.StringIO()
    try:
        log = make_logger("json", stream=own)
        log.warning("recompile", region="a")
        root.addHandler(logging.StreamHandler(app))  # the application's logging.basicConfig, after monitor.start()
        log.warning("recompile", region="b")
    finally:
        std.handlers[:], root.handlers[:] = saved
    assert [json.loads(line)["region"] for line in own.getvalue().splitlines()] == ["a"]
    assert [json.loads(line)["region"] for line in app.getvalue().splitlines()] == ["b"]
