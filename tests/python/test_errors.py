"""Errors both ways: statuses as exceptions chosen by code, exceptions as
statuses carrying type, message and traceback."""

import traceback

import pytest

import kcall
import kcall.testing as kt

CODES = [
    (1, "CANCELLED", kcall.CancelledError, None),
    (2, "UNKNOWN", kcall.UnknownError, RuntimeError),
    (3, "INVALID_ARGUMENT", kcall.InvalidArgumentError, ValueError),
    (4, "DEADLINE_EXCEEDED", kcall.DeadlineExceededError, TimeoutError),
    (5, "NOT_FOUND", kcall.NotFoundError, LookupError),
    (6, "ALREADY_EXISTS", kcall.AlreadyExistsError, None),
    (7, "PERMISSION_DENIED", kcall.PermissionDeniedError, PermissionError),
    (8, "RESOURCE_EXHAUSTED", kcall.ResourceExhaustedError, MemoryError),
    (9, "FAILED_PRECONDITION", kcall.FailedPreconditionError, RuntimeError),
    (10, "ABORTED", kcall.AbortedError, RuntimeError),
    (11, "OUT_OF_RANGE", kcall.OutOfRangeError, IndexError),
    (12, "UNIMPLEMENTED", kcall.UnimplementedError, NotImplementedError),
    (13, "INTERNAL", kcall.InternalError, RuntimeError),
    (14, "UNAVAILABLE", kcall.UnavailableError, RuntimeError),
    (15, "DATA_LOSS", kcall.DataLossError, RuntimeError),
    (16, "UNAUTHENTICATED", kcall.UnauthenticatedError, RuntimeError),
]


@pytest.mark.parametrize("code,name,cls,builtin", CODES)
def test_status_code_chooses_the_class(code, name, cls, builtin):
    with pytest.raises(cls) as info:
        kt.fail(code, "went wrong")
    e = info.value
    assert isinstance(e, kcall.Error)
    if builtin is not None:
        assert isinstance(e, builtin)
    assert e.code == name
    assert e.message == "went wrong"
    assert str(e) == "went wrong"


def test_an_error_made_in_python_carries_its_message():
    e = kcall.Error("went wrong")
    assert (e.code, e.message, e.context) == ("UNKNOWN", "went wrong", ())
    e = kcall.NotFoundError("no 'x' here")
    assert (e.code, e.message, str(e)) == ("NOT_FOUND", "no 'x' here",
                                           "no 'x' here")
    assert kcall.InvalidArgumentError().message == ""
    assert kcall.Error(3).message == "3"


def test_an_error_made_in_python_crosses_c_with_its_code_and_message():
    def callback():
        raise kcall.OutOfRangeError("index 9 of 3")
    code, text = kt.catch(callback)
    assert code == "OUT_OF_RANGE" and "index 9 of 3" in text
    with pytest.raises(kcall.OutOfRangeError) as info:
        kt.apply(callback)
    assert info.value.message == "index 9 of 3"


def test_invalid_argument_is_value_and_type_error():
    assert issubclass(kcall.InvalidArgumentError, ValueError)
    assert issubclass(kcall.InvalidArgumentError, TypeError)


def test_message_is_the_whole_context_chain(hello_plugin):
    kcall.load_plugin(hello_plugin)
    call = kcall.get_func("hello.call")  # hello.call(name, *args)
    with pytest.raises(kcall.InvalidArgumentError) as info:
        call("hello.add", 1, "x")
    e = info.value
    assert e.message == "hello.add: argument 1: expected int, got str"
    assert len(e.context) == 1 and e.context[0].startswith("hello.call")
    assert str(e) == ": ".join(e.context + (e.message,))


def test_python_exception_reaches_python_caller_as_itself():
    class Custom(Exception):
        pass

    def boom(x):
        raise Custom(f"bad {x}")

    with pytest.raises(Custom, match="bad 7") as info:
        kt.apply(boom, 7)
    # the traceback still shows the callback's frame
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "boom" in frames


def test_python_exception_through_two_levels_of_c():
    def inner():
        raise KeyError("deep")

    with pytest.raises(KeyError, match="deep"):
        kt.apply(kt.apply, inner)


def test_python_exception_reaches_c_caller_as_status():
    """What a C caller of a failing Python callback sees: the code chosen
    by the exception's type, and a message with the type, the message and
    the traceback."""
    def failing_callback():
        raise ValueError("callback failed")

    code, text = kt.catch(failing_callback)
    assert code == "INVALID_ARGUMENT"
    assert text.startswith("INVALID_ARGUMENT: ValueError: callback failed\n")
    assert "Python traceback (most recent call last):" in text
    assert "failing_callback" in text and "test_errors.py" in text
    assert kt.catch(lambda: 1) is None


def test_status_context_is_noted_on_the_original_exception(hello_plugin):
    kcall.load_plugin(hello_plugin)

    def boom():
        raise ZeroDivisionError("div by zero here")

    kcall.register_func("tests.err.zero", boom, override=True)
    with pytest.raises(ZeroDivisionError, match="div by zero here") as info:
        kcall.get_func("hello.call")("tests.err.zero")
    # hello.call added context on the way out; it is noted on the exception
    notes = getattr(info.value, "__notes__", [])
    assert any("raised through kcall" in n and "hello.call" in n
               for n in notes), notes


def test_exception_code_mapping_into_c():
    """Exceptions map to codes that come back as kcall errors when the
    original cannot be re-raised: a native thread hop keeps it."""
    cases = [(ValueError, "INVALID_ARGUMENT"), (TypeError, "INVALID_ARGUMENT"),
             (KeyError, "NOT_FOUND"), (IndexError, "OUT_OF_RANGE"),
             (NotImplementedError, "UNIMPLEMENTED"),
             (MemoryError, "RESOURCE_EXHAUSTED"), (RuntimeError, "UNKNOWN")]
    for exc, code in cases:
        def boom(exc=exc):
            raise exc("x")
        assert kt.catch(boom)[0] == code
        # and a Python caller further out still gets the original
        with pytest.raises(exc):
            kt.call_in_thread(boom)
    class MyError(Exception):
        pass

    def custom():
        raise MyError("mine")

    code, text = kt.catch(custom)
    assert code == "UNKNOWN"
    assert "test_errors.MyError: mine" in text or ".MyError: mine" in text


def test_kcall_error_raised_in_python_keeps_its_code():
    def boom():
        raise kcall.OutOfRangeError("too far")

    with pytest.raises(kcall.OutOfRangeError) as info:
        kt.apply(boom)
    assert info.value.code == "OUT_OF_RANGE"
