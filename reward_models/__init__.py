"""rewardsmith.reward_models: everything that loads or trains a torch model.

Local judge models now; outcome and process reward models arrive with the reward-model issue.
"""
