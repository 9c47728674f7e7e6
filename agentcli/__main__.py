from agentcli.cli.process import main

main()
