# The fixture model_analyzer_climbs.json: Model Analyzer's own QuickRunConfigGenerator step logic
# and Neighborhood (its source unpacked at MA_SRC, run in its venv) climbing over a pure model of an
# ensemble: steps of DELAYS ms, coordinates (max batch index, instance index) per step, measured at
# concurrency 2 x max batch x instances of the first step. With "bls": true, a BLS model calling
# the steps by name comes first (its own coordinates, holding an instance for the steps' sum, and
# the load from its coordinates), as Model Analyzer's bls_composing_models. One case (JSON) per run:
#   PYTHONPATH=$MA_SRC python model_analyzer_climbs.py '{"delays": [20, 5], ...}'
import sys, json
from model_analyzer.config.generate.quick_run_config_generator import QuickRunConfigGenerator
from model_analyzer.config.generate.coordinate import Coordinate
from model_analyzer.config.generate.coordinate_data import CoordinateData
from model_analyzer.config.generate.neighborhood import Neighborhood
from model_analyzer.config.generate.search_config import SearchConfig
from model_analyzer.config.generate.search_dimension import SearchDimension as SD
from model_analyzer.config.generate.search_dimensions import SearchDimensions

CASE = json.loads(sys.argv[1])
STEPS = CASE["delays"]; LIMIT = CASE.get("maxLatencyMs"); MAXC = CASE["maxConcurrency"]
DELAYS = [sum(STEPS)] + STEPS if CASE.get("bls") else STEPS
B = CASE["batches"]; C = CASE["counts"]

def figures(coord):
    vals = []
    for k in range(len(DELAYS)):
        vals.append((B[coord[2*k]], C[coord[2*k+1]]))
    b0, c0 = vals[0]
    conc = min(MAXC, max(1, 2 * b0 * c0))
    thr = min([conc * 1000 / sum(STEPS)] + [c * b * 1000 / d for (b, c), d in zip(vals, DELAYS)])
    return thr, conc / thr * 1000

class M:
    def __init__(self, coord):
        self.t, self.lat = figures(coord)
    def is_passing_constraints(self):
        return LIMIT is None or self.lat <= LIMIT
    def fail(self):
        return 0 if self.is_passing_constraints() else (self.lat - LIMIT) / LIMIT * 100
    def compare_measurements(self, other):
        return (other.t - self.t) / ((self.t + other.t) / 2)
    def compare_constraints(self, other):
        if self.is_passing_constraints() or other.is_passing_constraints():
            return None
        return (self.fail() - other.fail()) / 100
    def _cmp(self, other):
        s = -self.compare_measurements(other)
        return 1 if s > 0 else -1 if s < 0 else 0
    def __eq__(self, other): return self._cmp(other) == 0
    def __lt__(self, other): return not self._cmp(other) == 1
    def get_non_gpu_metric_value(self, name): return self.t

dims = SearchDimensions()
for k in range(len(DELAYS)):
    dims.add_dimensions(k, [SD("max_batch_size", SD.DIMENSION_TYPE_EXPONENTIAL, 0, len(B) - 1),
                            SD("instance_count", SD.DIMENSION_TYPE_LINEAR, 0, len(C) - 1)])
sc = SearchConfig(dimensions=dims, radius=3, min_initialized=3)
g = QuickRunConfigGenerator.__new__(QuickRunConfigGenerator)
g._search_config = sc
g._coordinate_data = CoordinateData()
g._home_coordinate = Coordinate(sc.get_min_indexes())
g._coordinate_to_measure = g._home_coordinate
g._best_coordinate = g._home_coordinate
g._best_measurement = None
g._neighborhood = Neighborhood(sc.get_neighborhood_config(), g._home_coordinate, g._coordinate_data)
g._home_has_passed = False
g._done = False
measured = []
while not g._done:
    c = list(g._coordinate_to_measure)
    measured.append(c)
    g.set_last_results([M(c)])
    g._step()
print(json.dumps({"measured": measured, "best": list(g._best_coordinate)}))
