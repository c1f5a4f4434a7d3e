"""rewardsmith.reward_models: everything that loads or trains a torch model.

Outcome and process reward models (data, step labels, training, evaluation, inference) and the
local judge models. Importing the package imports no torch; the modules that need it do.
"""
