"""Reports the CLI prints and writes: ``calibration`` (``rewardsmith calibrate``: reads the rows,
writes metrics.json, reliability.csv and the reliability diagram), ``calibration_metrics`` (Brier,
ECE, MCE, AUROC and the bins, with numpy), ``rm_eval`` (the table of ``rewardsmith eval rm``) and
``table`` (the number format and column layout every command's table shares, ``score``'s summary
included). Importing this package imports none of them, nor numpy.
"""
