import json
import logging
import socket

from company_ai.core.store import Stores
from company_ai.resources.notifier import Notifier
from tests.fakes import FakeServer, Reply

TOKEN = "123456:SECRET-token"


def telegram_ok(text="x", chat_id=42):
    """Telegram's reply shape for sendMessage."""
    return {
        "ok": True,
        "result": {
            "message_id": 7,
            "from": {"id": 1, "is_bot": True, "first_name": "company_ai"},
            "chat": {"id": chat_id, "type": "private"},
            "date": 1764489600,
            "text": text,
        },
    }


def telegram(data_dir, url, **kw):
    return Notifier(
        backend="telegram",
        data_dir=str(data_dir),
        outbox_path=str(data_dir / "outbox.jsonl"),
        telegram_token=TOKEN,
        telegram_chat_id="42",
        telegram_base_url=url,
        timeout_s=2,
        **kw,
    )


def pending(data_dir):
    with Stores(data_dir).connect("ops", readonly=True) as ops:
        return [r[0] for r in ops.execute("SELECT key FROM alerts WHERE sent_at IS NULL")]


def test_telegram_send_message_is_called_with_the_chat_and_text(tmp_path):
    with FakeServer() as server:
        server.script(f"/bot{TOKEN}/sendMessage", Reply(telegram_ok()))
        result = telegram(tmp_path, server.url).send("run-failure:abc", "FAILED memory_job")
    assert (result.sent, result.pending, result.error) == (1, 0, None)
    assert server.requests == [
        (f"/bot{TOKEN}/sendMessage", {"chat_id": "42", "text": "FAILED memory_job"})
    ]


def test_a_failure_is_sent_once_however_often_it_is_reported(tmp_path):
    with FakeServer() as server:
        server.script(f"/bot{TOKEN}/sendMessage", Reply(telegram_ok()))
        notifier = telegram(tmp_path, server.url)
        for _ in range(3):
            notifier.send("run-failure:abc", "FAILED memory_job")
    assert len(server.requests) == 1


def test_a_notifier_that_is_down_keeps_alerts_and_sends_them_later_in_order(tmp_path, caplog):
    path = f"/bot{TOKEN}/sendMessage"
    with FakeServer() as server:
        server.script(
            path,
            Reply({"ok": False, "error_code": 502, "description": "Bad Gateway"}, status=502),
            Reply(telegram_ok()),
        )
        notifier = telegram(tmp_path, server.url)
        with caplog.at_level(logging.WARNING):
            first = notifier.send("a", "first")
        assert first.pending == 1 and "telegram answered 502: Bad Gateway" in first.error
        assert pending(tmp_path) == ["a"]
        second = notifier.send("b", "second")
    assert (second.sent, second.pending) == (2, 0)
    assert [p["text"] for _, p in server.requests] == ["first", "first", "second"]
    assert pending(tmp_path) == []


def test_an_unreachable_server_never_leaks_the_token(tmp_path, caplog):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    with caplog.at_level(logging.DEBUG):
        result = telegram(tmp_path, url).send("a", "hello")
    assert result.pending == 1 and result.error
    with Stores(tmp_path).connect("ops", readonly=True) as ops:
        stored = ops.execute("SELECT last_error FROM alerts").fetchone()[0]
    assert TOKEN not in stored and TOKEN not in result.error and TOKEN not in caplog.text


def test_the_default_writes_the_outbox_and_the_log(tmp_path, caplog):
    notifier = Notifier(data_dir=str(tmp_path), outbox_path=str(tmp_path / "out" / "o.jsonl"))
    with caplog.at_level(logging.INFO):
        notifier.send("digest:2026-11-29", "all quiet")
        notifier.send("digest:2026-11-29", "all quiet")
    lines = (tmp_path / "out" / "o.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["all quiet"]
    assert "all quiet" in caplog.text
