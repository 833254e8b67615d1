complete --keep-order --exclusive --command kwatch --arguments "(COMPLETE=fish kwatch -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
