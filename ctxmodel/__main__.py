from ctxmodel.cli import main

main()
