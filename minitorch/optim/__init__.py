"""``minitorch.optim``: optimizers and learning-rate schedules."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
