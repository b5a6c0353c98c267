"""setfuncs: aggregations, equivariant layers and Deep Set models for the book
*On Deep Set Learning and the Choice of Aggregations* (Soelch et al., 2019).

>>> import setfuncs as sf
>>> agg = sf.aggregation("r-lse", features=16)
>>> model = sf.DeepSet(in_features=2, out_features=3, spec="r-lse/r-lse")

Importing the package needs only torch, numpy and tqdm: :mod:`setfuncs.explorables` (anywidget,
matplotlib) is imported on first use of ``sf.explorables``, so sweeps run on headless nodes.
"""

from importlib import import_module
from types import ModuleType


from .equivariant import DeepSetsEquivariant, Equivariant
from .isomorphic import SumIsomorphic, lme_as_sum, lse_as_sum, mean_as_sum, power_mean_as_sum
from .learnable import QueryAggregation, ReadProcessWrite, RecurrentAggregation
from .model import DeepSet, parse_spec
from .plain import (Aggregation, LogMeanExp, LogSumExp, Max, Mean, Median, Min, PowerMean, Quantile,
                    SoftmaxWeightedSum, Sum)
from .population import check_population, pad_populations
from .registry import aggregation, spec_names
from . import budget, plots, powersums, stacked, tables, train

__version__ = "1.2.0"

#: The ten model specs of the paper's Table 2 (equivariant / final aggregation).
TABLE2_SPECS = ("max/max", "max/r-lse", "max/r-sum", "max/q-max", "max/q-sum", "r-sum/r-sum",
                "max/r-max", "r-max/r-max", "r-lse/r-lse", "q-sum/q-sum")

__all__ = [
    "Aggregation", "Sum", "Mean", "Max", "Min", "LogSumExp", "LogMeanExp", "Quantile", "Median", "PowerMean",
    "SoftmaxWeightedSum", "SumIsomorphic", "mean_as_sum", "lse_as_sum", "lme_as_sum", "power_mean_as_sum",
    "QueryAggregation", "RecurrentAggregation", "ReadProcessWrite", "Equivariant",
    "DeepSetsEquivariant", "DeepSet", "parse_spec", "aggregation", "spec_names",
    "check_population", "pad_populations", "TABLE2_SPECS", "explorables",
]

#: Submodules imported on first use (they need the notebook stack).
_LAZY_MODULES = ("explorables",)


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_MODULES:
        module = import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
