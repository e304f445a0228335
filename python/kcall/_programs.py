"""The StableHLO text JAX makes, for kcall.Program.from_jax and
kcall.Program.from_exported (python/src/program.c parses it)."""


def jax_text(fn, *args, **kwargs):
    """jax.jit(fn) (or fn, when it is jitted already) lowered for these
    arguments, as StableHLO text."""
    if not callable(fn):
        raise TypeError("kcall.Program.from_jax: expected a function, got "
                        f"{type(fn).__name__}")
    import jax
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    return jitted.lower(*args, **kwargs).as_text()


def exported_text(exported):
    """The StableHLO text of a jax.export.Exported that kcall can run as
    it is: for the CPU alone, with concrete shapes and no ordered effects
    (each of which would change the entry's arguments)."""
    if not hasattr(exported, "mlir_module") or not hasattr(exported, "platforms"):
        raise TypeError("kcall.Program.from_exported: expected a "
                        "jax.export.Exported, got "
                        f"{type(exported).__name__}")
    platforms = tuple(exported.platforms)
    if platforms != ("cpu",):
        raise ValueError(
            "kcall.Program.from_exported: the export is for "
            f"{', '.join(platforms)}; with more than one platform its entry "
            "takes a platform index, and kcall runs the CPU's: export with "
            "platforms=['cpu']")
    if exported.ordered_effects:
        raise ValueError("kcall.Program.from_exported: the export has "
                         "ordered effects (token arguments), which kcall "
                         "does not read yet")
    return exported.mlir_module()
