"""``minitorch.onnx``: export a traced model to an ONNX file (chapter 05).

``export(model, example_inputs, path)`` traces the model, maps each op of the graph to
ONNX operators, stores parameters as initializers and writes the file with the ``onnx``
package (an optional extra: ``pip install 'minitorch[onnx]'``). Any ONNX runtime can then
run the model without Python, for example onnxruntime from C or C++.
"""

from .builder import OnnxExportError, UnsupportedOperatorError
from .export import export
from .symbolic import CONVERTERS
