"""The StableHLO text JAX makes, for kcall.Program.from_jax and
kcall.Program.from_exported (python/src/program.c parses it), and
kcall.ShapePolymorphicProgram, which compiles a shape-polymorphic module
once for each set of input shapes it is called with."""

import threading

# NumPy's dtype names and HLO's.
_HLO_TYPES = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def shape_text(x):
    """The shape of an array (anything with .shape and .dtype) as HLO
    writes it: "f32[5,8]"."""
    name = getattr(x.dtype, "name", str(x.dtype))
    if name not in _HLO_TYPES:
        raise TypeError(f"no HLO element type for {name}")
    return f"{_HLO_TYPES[name]}[{','.join(str(int(d)) for d in x.shape)}]"


def _symbolic(args):
    """Whether any argument (a pytree) has a dimension that is not an int."""
    import jax
    for leaf in jax.tree.leaves(args):
        for d in getattr(leaf, "shape", ()):
            if not isinstance(d, int) and not hasattr(d, "__index__"):
                return True
    return False


def jax_text(fn, *args, **kwargs):
    """jax.jit(fn) (or fn, when it is jitted already) lowered for these
    arguments, as StableHLO text; exported, as a ShapePolymorphicProgram,
    when a dimension is symbolic."""
    if not callable(fn):
        raise TypeError("kcall.Program.from_jax: expected a function, got "
                        f"{type(fn).__name__}")
    import jax
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    if _symbolic((args, kwargs)):
        from jax import export
        return exported_text(export.export(jitted, platforms=["cpu"])(*args, **kwargs))
    return jitted.lower(*args, **kwargs).as_text()


def exported_text(exported):
    """A jax.export.Exported serialized (`Exported.serialize()`), which
    kcall reads with its calling convention: the platform index bound to
    the CPU's lowering, ordered effects and other conventions refused; a
    ShapePolymorphicProgram when its shapes are symbolic.

    JAX serializes with the `flatbuffers` package, which it does not
    install: without it, the export's StableHLO text, which kcall can run
    as it is only when it is for the CPU alone and has no ordered effects
    (each of which changes the entry's arguments)."""
    if not hasattr(exported, "serialize") or not hasattr(exported, "platforms"):
        raise TypeError("kcall.Program.from_exported: expected a "
                        "jax.export.Exported, got "
                        f"{type(exported).__name__}")
    try:
        data = bytes(exported.serialize())
    except ImportError:
        platforms = tuple(exported.platforms)
        if platforms != ("cpu",) or exported.ordered_effects:
            what = (f"for {', '.join(platforms)}" if platforms != ("cpu",)
                    else "with ordered effects")
            raise ValueError(
                f"kcall.Program.from_exported: the export is {what}, which "
                f"kcall reads from its serialized form, and JAX serializes "
                f"only with the flatbuffers package: pip install flatbuffers "
                f"(or export with platforms=['cpu'])") from None
        data = exported.mlir_module()
    if _symbolic(exported.in_avals):
        return ShapePolymorphicProgram(data)
    return data


class ShapePolymorphicProgram:
    """A shape-polymorphic StableHLO module (jax.export with symbolic
    shapes; its text, or a serialized export's bytes): a kcall.Program for
    each set of parameter shapes.

    ``program(*arrays)`` (or ``program(shapes=[...])``) gives the program
    refined for those shapes; ``compile()`` gives a function that compiles
    the module once per set of input shapes (dtype and dims) it is called
    with, and reuses that executable for every later call with the same
    shapes (``compiled_shapes`` lists them)."""

    def __init__(self, text):
        self.text = text

    def program(self, *arrays, shapes=None):
        """The kcall.Program for these arrays' shapes (or the shapes given,
        as kcall.Program.parse takes them)."""
        from . import Program
        if arrays and shapes is not None:
            raise TypeError("give arrays or shapes=, not both")
        if shapes is None:
            shapes = [shape_text(a) for a in arrays]
        return Program.parse(self.text, shapes=shapes)

    def compile(self, platform="host", **options):
        """A function running the module on its inputs, compiled for each
        set of input shapes once (kcall.Program.compile's options)."""
        return _PolymorphicRun(self, platform, options)

    def __repr__(self):
        what = "a serialized jax.export" if isinstance(self.text, bytes) else "StableHLO"
        return f"<kcall.ShapePolymorphicProgram: {len(self.text)} bytes of {what}>"


class _PolymorphicRun:
    def __init__(self, poly, platform, options):
        self._poly = poly
        self._platform = platform
        self._options = options
        self._lock = threading.Lock()
        self._executables = {}

    @property
    def compiled_shapes(self):
        """The input shapes compiled for, in the order first seen."""
        with self._lock:
            return list(self._executables)

    def __call__(self, *arrays):
        key = tuple(shape_text(a) for a in arrays)
        with self._lock:
            run = self._executables.get(key)
        if run is None:
            run = self._poly.program(shapes=list(key)).compile(self._platform, **self._options)
            with self._lock:
                run = self._executables.setdefault(key, run)
        return run(*arrays)
