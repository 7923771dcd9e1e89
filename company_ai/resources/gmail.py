"""The Gmail API client that the mailer and the inbox reader share: one token, each
resource asking only for its own scopes when the token is refreshed."""

import json
from collections.abc import Sequence
from typing import Any


def gmail_credentials(token: str, scopes: Sequence[str]) -> Any:
    """The authorized-user token's credentials, limited to `scopes`: each refresh asks
    Google for an access token of those scopes only, whatever else the token was granted."""
    from google.oauth2.credentials import Credentials

    return Credentials.from_authorized_user_info(json.loads(token), list(scopes))


def gmail_service(token: str, scopes: Sequence[str], http: Any, needed_by: str) -> Any:
    """A `gmail` v1 service: over `http` in the tests (`HttpMockSequence`), else with the
    token's credentials; a missing token is a clear error that says who needs it."""
    from googleapiclient.discovery import build

    if http is not None:
        return build("gmail", "v1", http=http, static_discovery=True)
    if not token:
        raise ValueError(
            f"the gmail {needed_by} needs COMPANY_AI_GMAIL_TOKEN (authorized-user JSON)"
        )
    return build(
        "gmail",
        "v1",
        credentials=gmail_credentials(token, scopes),
        static_discovery=True,
        cache_discovery=False,
    )
