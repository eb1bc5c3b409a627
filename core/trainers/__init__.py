"""Trainers: the flywheel's training phase (``Trainer``), registered through
``autoenvscaling_register_trainers``."""
