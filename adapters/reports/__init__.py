"""Reports over scored files: ``calibration`` (``rewardsmith calibrate``: reads the rows, writes
metrics.json, reliability.csv and the reliability diagram) and ``calibration_metrics`` (Brier, ECE,
MCE, AUROC and the bins, with numpy). Importing this package imports neither, nor numpy.
"""
