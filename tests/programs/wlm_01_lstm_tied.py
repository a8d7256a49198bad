"""Word-level language modelling with a 2-layer LSTM whose decoder shares the embedding's
weights (--tied): batchify with narrow, truncated backpropagation through time with
repackage_hidden, gradient clipping, a hand-written SGD update, validation each epoch,
learning rate annealing, and the best model saved, loaded and tested.

Source: pytorch/examples, word_language_model/main.py (model.py and data.py are in
_word_language_model.py). The wikitext-2 download is replaced by a tiny generated corpus,
the sizes and epochs are cut, and the best model is saved as its state_dict (minitorch
does not pickle whole modules: torch.save(model) is refused by design).
"""
# compare: masked

import sys

sys.argv = [
    "main.py",
    "--data",
    "./tiny",
    "--emsize",
    "16",
    "--nhid",
    "16",
    "--tied",
    "--epochs",
    "2",
    "--batch_size",
    "4",
    "--bptt",
    "8",
    "--log-interval",
    "2",
]
import _word_language_model_main  # noqa: E402, F401  (python main.py <options>)
