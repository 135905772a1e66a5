"""Drafting heroes with a model's win probability (Five app. D.2): the scores of a pool's lineups from the first
frames of a game (lineups.py, cached on disk), minimax over the remaining picks (minimax.py), and how much the win
probability is worth on recorded games (calibration.py). The CLI is app/draft.py; the page is web/draft.py."""
