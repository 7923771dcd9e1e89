import json
import logging
import os
import re
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import PrivateAttr

from company_ai.core.ops import alerts
from company_ai.core.ops.alerts import AlertChannel
from company_ai.core.secrets import MASK, scrub, secrets_from_env
from company_ai.core.store import Store, Stores
from company_ai.core.times import to_iso, utc_now

TELEGRAM_MAX_CHARS = 4096


class _HideBotToken(logging.Filter):
    """httpx logs every request's URL at INFO, and a Bot API URL holds the token
    (`/bot<token>/sendMessage`): mask it, should anyone turn those logs on."""

    _TOKEN_IN_URL = re.compile(r"/bot[^/\s\"']+/")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/bot" in message:
            record.msg, record.args = self._TOKEN_IN_URL.sub(f"/bot{MASK}/", message), ()
        return True


logging.getLogger("httpx").addFilter(_HideBotToken())


class NotifierError(RuntimeError):
    """An alert could not be delivered (it stays queued and is retried on the next send)."""


class OutboxChannel:
    """Each alert appended to `outbox_path` as one JSON line."""

    def __init__(self, outbox_path: str) -> None:
        self.outbox_path = outbox_path

    def deliver(self, text: str) -> None:
        path = Path(self.outbox_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as outbox:
            outbox.write(json.dumps({"at": to_iso(utc_now()), "text": text}) + "\n")


class TelegramChannel:
    """Each alert sent by the Bot API's `sendMessage` (cut to `TELEGRAM_MAX_CHARS`)."""

    def __init__(self, token: str, chat_id: str, base_url: str, timeout_s: float) -> None:
        self.token, self.chat_id = token, chat_id
        self.base_url, self.timeout_s = base_url, timeout_s

    def deliver(self, text: str) -> None:
        if not self.token or not self.chat_id:
            raise NotifierError("telegram needs COMPANY_AI_TELEGRAM_TOKEN and a chat id")
        if len(text) > TELEGRAM_MAX_CHARS:
            text = text[: TELEGRAM_MAX_CHARS - 1] + "…"
        url = f"{self.base_url.rstrip('/')}/bot{self.token}/sendMessage"
        import httpx  # only the telegram backend needs it: not at every run's start

        try:
            response = httpx.post(
                url, json={"chat_id": self.chat_id, "text": text}, timeout=self.timeout_s
            )
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            # httpx puts the URL, which holds the token, into its messages; alerts.flush
            # scrubs the message, and `from None` keeps the original out of any traceback.
            raise NotifierError(f"{type(exc).__name__}: {exc}") from None
        if not (isinstance(body, dict) and body.get("ok")):
            description = body.get("description") if isinstance(body, dict) else None
            raise NotifierError(f"telegram answered {response.status_code}: {description}")


class Notifier(dg.ConfigurableResource):
    """Where alerts and reports go. Every message is first queued in `ops.db` (`alerts`,
    unique by key, so one failure is announced once), then every pending message is
    delivered oldest first. `outbox` (the default): appended as a JSON line to
    `outbox_path` and written to the log. `telegram`: the Bot API's `sendMessage`.
    Delivery failures never raise: the message stays pending and goes with the next send.
    Every secret (the token, and any `COMPANY_AI_…TOKEN`/`…SECRET`/`…PASSWORD` setting) is
    scrubbed from alert text and delivery errors before they are stored or logged. The
    channel (`OutboxChannel`, `TelegramChannel`) is chosen once (`implementation`)."""

    backend: Literal["outbox", "telegram"] = "outbox"
    data_dir: str
    database_url: str = ""  # a secret (its password): bind it as dg.EnvVar, as the stores'
    outbox_path: str
    telegram_token: str = ""  # a secret: bind it only as dg.EnvVar("COMPANY_AI_TELEGRAM_TOKEN")
    telegram_chat_id: str = ""
    telegram_base_url: str = "https://api.telegram.org"
    timeout_s: float = 10.0
    _chosen: AlertChannel | None = PrivateAttr(default=None)

    def implementation(self) -> AlertChannel:
        """The channel of `backend`, made once."""
        if self._chosen is None:
            if self.backend == "telegram":
                self._chosen = TelegramChannel(
                    self.telegram_token,
                    self.telegram_chat_id,
                    self.telegram_base_url,
                    self.timeout_s,
                )
            else:
                self._chosen = OutboxChannel(self.outbox_path)
        return self._chosen

    def send(self, key: str, text: str) -> alerts.FlushResult:
        """Queue `text` under `key` (a repeat of a key is ignored) and flush the queue."""
        log = dg.get_dagster_logger()
        secrets = self._secrets()
        with self._stores().connect(Store.OPS) as ops:
            if alerts.enqueue(ops, key, text, secrets, now=utc_now()):
                log.info(f"alert {key}: {scrub(text, secrets)}")
            result = alerts.flush(ops, self._deliver, secrets, clock=utc_now)
        if result.error:
            log.warning(
                f"notifier ({self.backend}) is unavailable, {result.pending} alert(s) kept "
                f"for the next send: {result.error}"
            )
        return result

    def flush(self) -> alerts.FlushResult:
        """Retry whatever is pending (e.g. on a sensor tick with nothing new to say)."""
        with self._stores().connect(Store.OPS) as ops:
            return alerts.flush(ops, self._deliver, self._secrets(), clock=utc_now)

    def _stores(self) -> Stores:
        # The alert queue lives in the ops store, wherever the stores are.
        return Stores(self.data_dir, database_url=self.database_url)

    def _secrets(self) -> list[str]:
        """What `alerts` scrubs from every text and error before storing or returning it."""
        return [self.telegram_token, *secrets_from_env(os.environ)]

    def _deliver(self, text: str) -> None:
        self.implementation().deliver(text)
