"""``torch.fx._symbolic_trace``'s names (generated code re-wraps wrapped functions with
``torch.fx._symbolic_trace.wrap``)."""

from .proxy import wrap
from .tracer import Tracer, symbolic_trace

__all__ = ["Tracer", "symbolic_trace", "wrap"]
