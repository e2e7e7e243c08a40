"""Actions: the plug-ins, the ``http_request`` action's limits and the secrets actions name.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

import pathlib

from ecp_http.config.table.parsers import action_modules
from ecp_http.config.values import Setting, SettingFamily, flag, path, whole

ACTION_MODULES: Setting[tuple[str, ...]] = Setting(
    name="ECP_ACTION_MODULES",
    parse=action_modules,
    default=(),
    description=(
        "comma-separated `module:function` action plug-ins, loaded after the installed `ecp.actions` "
        "entry points; a plug-in that fails to import or register refuses start-up with one line "
        "naming it (`docs/actions.md`, ADR 0027)"
    ),
)

HTTP_ACTION_MAX_BYTES: Setting[int] = Setting(
    name="ECP_HTTP_ACTION_MAX_BYTES",
    parse=whole(1),
    default=1024 * 1024,
    description=(
        "largest response body the `http_request` action accepts (1 MiB); a larger one fails the "
        "attempt with `response_too_large`, read no further than the cap (ADR 0028)"
    ),
    shown_default="`1048576`",
)

HTTP_ACTION_ALLOW_PRIVATE_TARGETS: Setting[bool] = Setting(
    name="ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS",
    parse=flag,
    default=False,
    description=(
        "let `http_request` reach loopback and private targets; every other non-public address stays "
        "refused, as for webhooks (ADR 0016, 0028)"
    ),
    shown_default="`false`",
)

SECRET = SettingFamily(
    prefix="ECP_SECRET_",
    description=(
        "every setting starting with `ECP_SECRET_` is the secret `<NAME>` that an `http_request` node "
        "names in `secret_headers`; never written to run state, audit records or logs (ADR 0028)"
    ),
)

SECRETS_DIR: Setting[pathlib.Path | None] = Setting(
    name="ECP_SECRETS_DIR",
    parse=path,
    default=None,
    description=(
        "a directory of secret files, one per name (`$ECP_SECRETS_DIR/<NAME>`, read at each use, "
        "trailing line break dropped); an `ECP_SECRET_<NAME>` setting wins"
    ),
)
