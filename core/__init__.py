"""AutoEnvScaling: propose, validate, calibrate and train on Harbor-format RL environments.

Importing this package is cheap on purpose: heavy libraries load inside the functions that need them.
"""

__version__ = "0.1.0"
