// The explorer view of sessions and active pivots: a thin adapter from logic.treeModel to
// VS Code tree items.

import * as vscode from 'vscode';
import { Active, Info, Node, Timeline, treeModel } from './logic';

export class PivotTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  // Empty until the server first answers: the view's welcome text then says it is starting.
  private roots: Node[] = [];

  update(info: Info | undefined, active: Active | undefined, timeline?: Timeline): void {
    this.roots = treeModel(info, active, timeline);
    this.changed.fire(undefined);
  }

  getTreeItem(n: Node): vscode.TreeItem {
    // The two groups open; a session's pivot changes folded under it.
    const state = !n.children
      ? vscode.TreeItemCollapsibleState.None
      : n.id.startsWith('session:')
        ? vscode.TreeItemCollapsibleState.Collapsed
        : vscode.TreeItemCollapsibleState.Expanded;
    const item = new vscode.TreeItem(n.label, state);
    item.id = n.id;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.contextValue = n.contextValue;
    if (n.icon) item.iconPath = new vscode.ThemeIcon(n.icon);
    if (n.command) {
      item.command = { command: n.command.command, title: n.label, arguments: n.command.args };
    }
    return item;
  }

  getChildren(n?: Node): Node[] {
    return n ? n.children ?? [] : this.roots;
  }
}
