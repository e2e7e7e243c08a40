"""The one converter between JSON-shaped data and ECP's attrs models.

Strict on the way in: no string-to-number coercion, no truncation of floats to integers, booleans
are not numbers, timestamps must carry an offset and are normalised to UTC, money is an exact
decimal string. "No extras" schemas reject unknown keys. Every failing field is reported with its
location, all at once.
"""

import enum
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Context, Decimal, InvalidOperation
from typing import Any, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import (
    homogenous_tuple_structure_factory,
    list_structure_factory,
    mapping_structure_factory,
)
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn

from ecp_core.canonical import ORJSON, storable_text
from ecp_core.constraints import WIRE_CHECKED, constraints_of, forbids_extras
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.money import money_text

T = TypeVar("T")

Loc = tuple[str | int, ...]


def format_timestamp(moment: datetime) -> str:
    """Write an aware datetime as RFC 3339 UTC with microseconds and ``Z``.

    orjson, when installed, writes a UTC datetime with a fraction the same way several times
    faster (it leaves out a zero fraction, so those take the general path).
    """
    if (
        ORJSON is not None
        and type(moment) is datetime
        and moment.tzinfo is UTC
        and moment.microsecond
    ):
        return ORJSON.dumps(moment, option=ORJSON.OPT_UTC_Z)[1:-1].decode()  # type: ignore[no-any-return]
    if moment.tzinfo is None:
        msg = "naive datetime"
        raise ValueError(msg)
    text = moment.astimezone(UTC).isoformat(timespec="microseconds")
    return text.removesuffix("+00:00") + "Z"


def parse_timestamp(text: str) -> datetime:
    """Read an RFC 3339 timestamp with an offset (or ``Z``) into an aware UTC datetime."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        msg = "timestamp must carry a UTC offset or Z"
        raise ValueError(msg)
    return moment.astimezone(UTC)


def _strict(kind: type, name: str) -> Callable[[Any, type], Any]:
    def structure(value: Any, _: type) -> Any:  # noqa: ANN401
        if type(value) is not kind:
            msg = f"expected {name}"
            raise TypeError(msg)
        return value

    return structure


def _structure_text(value: Any, _: type) -> str:  # noqa: ANN401
    if type(value) is not str:
        msg = "expected a string"
        raise TypeError(msg)
    if not storable_text(value):
        msg = "must not contain U+0000 or unpaired surrogates"
        raise ValueError(msg)
    return value


def _structure_int(value: Any, _: type) -> int:  # noqa: ANN401
    if type(value) is not int:
        msg = "expected an integer"
        raise TypeError(msg)
    return value


def _structure_float(value: Any, _: type) -> float:  # noqa: ANN401
    if type(value) not in (int, float):
        msg = "expected a number"
        raise TypeError(msg)
    return float(value)


def _structure_decimal(value: Any, _: type) -> Decimal:  # noqa: ANN401
    if type(value) is not str:
        msg = "expected an exact decimal string"
        raise TypeError(msg)
    try:
        number = Decimal(value)
    except InvalidOperation as exc:
        msg = "expected an exact decimal string"
        raise ValueError(msg) from exc
    if not number.is_finite():
        msg = "expected a finite decimal"
        raise ValueError(msg)
    return number


def _structure_datetime(value: Any, _: type) -> datetime:  # noqa: ANN401
    if type(value) is not str:
        msg = "expected an RFC 3339 timestamp string"
        raise TypeError(msg)
    return parse_timestamp(value)


def _structure_enum(value: Any, cls: type[enum.Enum]) -> enum.Enum:  # noqa: ANN401
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in cls)
        msg = f"expected one of {allowed}"
        raise ValueError(msg) from None


_TUPLE_ARGS = 2


def _is_homogeneous_tuple(tp: Any) -> bool:  # noqa: ANN401
    args = get_args(tp)
    return get_origin(tp) is tuple and len(args) == _TUPLE_ARGS and args[1] is Ellipsis


def _origin_is(kind: type) -> Callable[[Any], bool]:
    return lambda tp: get_origin(tp) is kind


def _register_collections(conv: cattrs.Converter) -> None:
    """Objects and arrays: cattrs' hooks, after a check that the JSON type is right at all."""

    def shaped(kind: type, name: str, make: Callable[..., Any]) -> Callable[[Any], Any]:
        def factory(tp: Any) -> Callable[[Any, Any], Any]:  # noqa: ANN401
            base = make(tp, conv)

            def structure(value: Any, target: Any) -> Any:  # noqa: ANN401
                if not isinstance(value, kind):
                    msg = f"expected {name}"
                    raise TypeError(msg)
                return base(value, target)

            return structure

        return factory

    conv.register_structure_hook_factory(
        _origin_is(dict), shaped(dict, "an object", mapping_structure_factory)
    )
    conv.register_structure_hook_factory(
        _origin_is(list), shaped(list, "an array", list_structure_factory)
    )
    conv.register_structure_hook_factory(
        _is_homogeneous_tuple, shaped(list, "an array", homogenous_tuple_structure_factory)
    )


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(detailed_validation=True)
    conv.register_structure_hook(str, _structure_text)
    conv.register_structure_hook(bool, _strict(bool, "a boolean"))
    conv.register_structure_hook(int, _structure_int)
    conv.register_structure_hook(float, _structure_float)
    conv.register_structure_hook(Decimal, _structure_decimal)
    conv.register_structure_hook(datetime, _structure_datetime)
    conv.register_unstructure_hook(datetime, format_timestamp)
    conv.register_unstructure_hook(Decimal, money_text)
    # StrEnum and IntEnum come before str and int in their MRO, so enums keep this hook.
    for base in (enum.Enum, enum.StrEnum, enum.IntEnum):
        conv.register_structure_hook(base, _structure_enum)
        conv.register_unstructure_hook(base, lambda member: member.value)

    def is_constrained(tp: Any) -> bool:  # noqa: ANN401
        return bool(constraints_of(tp)[1])

    def constrained_hook(tp: Any) -> Callable[[Any, Any], Any]:  # noqa: ANN401
        base, found = constraints_of(tp)  # split once per type, not once per value
        inner = conv.get_structure_hook(base)

        def structure_constrained(value: Any, _: Any) -> Any:  # noqa: ANN401
            result = inner(value, base)
            for constraint in found:
                problem = constraint.check(result)
                if problem is not None:
                    raise ValueError(problem)
            return result

        return structure_constrained

    conv.register_structure_hook_factory(is_constrained, constrained_hook)

    def attrs_hook(cls: type) -> Callable[[Any, type], Any]:
        return make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=forbids_extras(cls))

    conv.register_structure_hook_factory(attrs.has, attrs_hook)

    _register_collections(conv)

    def is_tuple(tp: Any) -> bool:  # noqa: ANN401
        return tp is tuple or get_origin(tp) is tuple

    conv.register_unstructure_hook_factory(
        is_tuple, lambda _tp: lambda value: [conv.unstructure(item) for item in value]
    )
    return conv


converter = _make_converter()

_digest_converter = converter.copy()
_digest_converter.register_unstructure_hook(
    Decimal, lambda number: money_text(canonical_decimal(number))
)


def canonical_decimal(number: Decimal) -> Decimal:
    """One spelling per value: no trailing zeros, no exponent sign games (``1.50`` → ``1.5``)."""
    normal = number.normalize(Context(prec=200))
    return normal or Decimal(0)


def _notes(exc: BaseException) -> list[str]:
    return [str(note) for note in getattr(exc, "__notes__", [])]


def _step(exc: BaseException) -> str | int | None:
    for note in getattr(exc, "__notes__", []):
        name = getattr(note, "name", None)
        if isinstance(name, str):
            return name
        index = getattr(note, "index", None)
        if isinstance(index, int | str):
            return index
    return None


def field_errors(exc: BaseException, loc: Loc = ()) -> Iterator[FieldError]:
    """Flatten a cattrs validation exception tree into located field errors."""
    step = _step(exc)
    here = (*loc, step) if step is not None else loc
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            yield FieldError(loc=(*here, key), msg="unknown property")
    elif isinstance(exc, ClassValidationError | IterableValidationError):
        for child in exc.exceptions:
            yield from field_errors(child, here)
    elif isinstance(exc, KeyError):
        yield FieldError(loc=here, msg="required")
    elif isinstance(exc, ExceptionGroup):
        for child in exc.exceptions:
            yield from field_errors(child, here)
    else:
        yield FieldError(loc=here, msg=str(exc) or type(exc).__name__)


def structure(data: Any, cls: type[T], *, what: str | None = None) -> T:  # noqa: ANN401
    """Build ``cls`` from JSON-shaped ``data`` or raise ValidationFailed naming every bad field."""
    if attrs.has(cls) and not isinstance(data, dict):
        raise ValidationFailed(
            f"{what or cls.__name__} must be a JSON object",
            errors=[FieldError(loc=(), msg="expected an object")],
        )
    token = WIRE_CHECKED.set(True)  # the hooks check each constraint; __init__ need not again
    try:
        return converter.structure(data, cls)
    except (ClassValidationError, IterableValidationError) as exc:
        errors = list(field_errors(exc))
    except (TypeError, ValueError) as exc:
        errors = [FieldError(loc=(), msg=str(exc))]
    finally:
        WIRE_CHECKED.reset(token)
    raise ValidationFailed(f"{what or cls.__name__} is invalid", errors=errors)


def digest_form(value: Any) -> Any:  # noqa: ANN401
    """Like :func:`unstructure`, but decimals in their one canonical spelling.

    Equal values digest equally (``"1E-8"``, ``"0.00000001"`` and ``"0.000000010"`` alike).
    """
    return _digest_converter.unstructure(value)


def unstructure(value: Any) -> Any:  # noqa: ANN401
    """Turn a model into JSON-shaped data (timestamps with ``Z``, Decimals as strings)."""
    return converter.unstructure(value)
