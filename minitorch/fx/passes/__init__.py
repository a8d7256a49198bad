"""``fx.passes``: ready-made passes (``shape_prop.ShapeProp``)."""

from . import shape_prop

__all__ = ["shape_prop"]
