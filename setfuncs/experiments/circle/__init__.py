"""Ground truth of the minimal enclosing circle experiment (Section 4.1 of the paper).

>>> from setfuncs.experiments.circle import min_enclosing_circle, min_enclosing_circles
>>> center, radius = min_enclosing_circle([[0.0, 0.0], [2.0, 0.0]])        # one population [N, 2]
>>> centers, radii = min_enclosing_circles(np.zeros((4, 20, 2)))           # a batch [B, N, 2]
"""

from .batched import min_enclosing_circles, min_enclosing_circles_bruteforce
from .welzl import Circle, Step, circle_of, min_enclosing_circle, welzl_trace

__all__ = ["min_enclosing_circle", "min_enclosing_circles", "min_enclosing_circles_bruteforce",
           "welzl_trace", "Step", "Circle", "circle_of"]
